"""Convolutional text models: the CNN encoder and TextCNN (Kim 2014)."""
