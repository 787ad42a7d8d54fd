"""Files given to an agent: their rows (``models.Attachment``), their bytes in Django's
storage (``storage``), and how ``DjangoSession`` keeps them out of item rows while
returning every item exactly as it was added (``inline``)."""
