"""Recurrent cells (RNN, LSTM, GRU) and the stacked, bidirectional recurrent encoder."""
