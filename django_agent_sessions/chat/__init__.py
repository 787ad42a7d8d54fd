"""The packaged chat page and the conversation management it uses (``urls.py``)."""
