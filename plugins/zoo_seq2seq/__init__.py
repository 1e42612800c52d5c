"""The seq2seq architecture and its recurrent decoder with an attention slot."""
