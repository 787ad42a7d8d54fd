/*
 * "Branch from here" on a stored message of the user: the server copies what came before
 * it into a new conversation (POST c/<id>/branch/), whose page then offers the message's
 * text again in its message box (kept in sessionStorage for that one page load).
 */
const DRAFT = "das:draft:";

export async function branchFrom(actions, url, article) {
  const data = await actions.post(url, { item_id: article.dataset.itemId });
  if (!data) return;
  const id = data.url.replace(/\/$/, "").split("/").pop();
  window.sessionStorage.setItem(DRAFT + id, data.text);
  window.location.assign(data.url);
}

/* The text a branch offers, once: null when there is none. */
export function takeDraft(sessionId) {
  const draft = window.sessionStorage.getItem(DRAFT + sessionId);
  window.sessionStorage.removeItem(DRAFT + sessionId);
  return draft;
}
