"""Helpers the tests share: paths of inputs, facts read back from datasets, trace mutation."""
