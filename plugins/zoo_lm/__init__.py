"""Language models, word or character level: recurrent (RNN, LSTM, GRU) and dilated causal
convolutional (a temporal convolutional network), with their recipe, token streams and perplexity."""
