/*
 * The chat's JSON API (django_agent_sessions.urls) over fetch: POSTs carry Django's CSRF
 * token in X-CSRFToken, as Django's documentation says for AJAX.
 */

export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match) return decodeURIComponent(match[1]);
  const field = document.querySelector("input[name=csrfmiddlewaretoken]");
  return field ? field.value : "";
}

/* POST `fields`; the JSON answer, or null after telling `feedback` what went wrong. */
export async function post(url, fields, feedback) {
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken() },
      body: fields ? new URLSearchParams(fields) : undefined,
    });
  } catch (error) {
    feedback.failed();
    return null;
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    feedback.failed(data.error);
    return null;
  }
  feedback.succeeded();
  return data;
}

/* GET a JSON document; null when it cannot be had (the caller tries again later). */
export async function getJson(url) {
  try {
    const response = await fetch(url, { credentials: "same-origin" });
    return response.ok ? await response.json() : null;
  } catch (error) {
    return null;
  }
}
