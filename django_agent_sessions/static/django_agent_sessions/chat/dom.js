/*
 * Small DOM helpers shared by the chat's modules. Everything a user, a tool or the model
 * wrote is inserted as text (textContent), never as HTML.
 */

export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  // Plain http on a non-local host: the old way still works.
  const area = element("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "visually-hidden";
  document.body.appendChild(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

export function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch (error) {
    return String(text);
  }
}

export function shorten(text, length) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length > length ? flat.slice(0, length - 1) + "…" : flat;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function timestamp(value) {
  const date = value ? new Date(value) : new Date();
  const valid = !Number.isNaN(date.getTime()) ? date : new Date();
  const node = element("time", "timestamp", timeFormat.format(valid));
  node.dateTime = valid.toISOString();
  node.title = dateTimeFormat.format(valid);
  return node;
}

/* A translated text with its {placeholders} filled in (the translation may move them). */
export function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (found, key) => (key in values ? String(values[key]) : found));
}
