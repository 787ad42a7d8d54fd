"""What runs spend: tokens by model on each run (the model) and what tokens cost (prices)."""
