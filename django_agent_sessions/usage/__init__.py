"""What runs spend: tokens by model on each run, prices, and token budgets (quotas)."""
