"""Recurrent language models (RNN, LSTM, GRU), word or character level."""
