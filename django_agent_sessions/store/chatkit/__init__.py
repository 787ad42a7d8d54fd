"""ChatKit's threads, items and attachments (``chatkit_rows``), for the ``chatkit``
extra's store (``protocols/chatkit``): each function here is one operation, one
transaction, on behalf of one owner; the adapter hops into it (``store.hops``).

- ``threads``: a thread's metadata, the owner's threads, a thread deleted;
- ``items``: a thread's items, and the SDK items that messages are mirrored to;
- ``attachments``: attachments' metadata and bytes;
- ``feedback``: ChatKit's feedback on items, as the app's ``Feedback``.

A thread that is missing or someone else's is ``Missing`` alike: nobody learns that an
id is taken.
"""

from __future__ import annotations


class Missing(LookupError):
    """No such thread, item or attachment of this owner."""
