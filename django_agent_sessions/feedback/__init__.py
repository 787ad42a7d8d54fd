"""People's ratings of the assistant's replies (``models.Feedback``), for finding bad
answers and turning them into evaluation data (``export``)."""
