"""Token budgets (``QUOTAS``): checked before a run starts, against what runs spent."""
