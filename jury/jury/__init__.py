"""jury.jury: the model-calling layer (client.py is the only module that imports litellm)."""
