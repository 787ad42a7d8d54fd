/*
 * Search: the sidebar's box finds the person's conversations by title and by what was said
 * in them (GET search/?q=, chat/search.py). Each result shows its snippet with the matches
 * in <mark>, built from text nodes: nothing anyone wrote is ever parsed as HTML.
 * Keyboard: typing searches, Enter searches at once, Arrow Down/Up move through the
 * results, Enter opens one, Escape goes back to the box and then clears it.
 * A result on a message opens its conversation at #item-<id>: once the history is shown,
 * the page pages older items in until that message is there, then scrolls to it.
 */
import { element, fill } from "./dom.js";
import { getJson } from "./http.js";

const WAIT_MS = 250; // typing pauses this long before a search
const FIND_MS = 20000; // how long an opened message is looked for
const FIND_EVERY_MS = 150;

export class Search {
  constructor(form, input, results, status, strings) {
    this.form = form;
    this.input = input;
    this.results = results;
    this.status = status;
    this.strings = strings;
    this.timer = null;
    this.asked = 0; // answers to older queries are dropped
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.run();
    });
    input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.run(), WAIT_MS);
    });
    form.addEventListener("keydown", (event) => this.key(event));
  }

  async run() {
    clearTimeout(this.timer);
    const query = this.input.value.trim();
    const asked = ++this.asked;
    if (!query) return this.show(null);
    const archived = document.getElementById("show-archived"); // keeping.js
    const shown = archived && archived.checked ? "&archived=1" : "";
    const url = this.form.dataset.url + "?q=" + encodeURIComponent(query) + shown;
    const data = await getJson(url);
    if (asked === this.asked) this.show(data ? data.results || [] : null, data === null);
  }

  show(results, failed) {
    if (results) results = withTitlesMerged(results);
    this.results.replaceChildren(...(results || []).map((hit) => this.result(hit)));
    this.results.hidden = !results || !results.length;
    if (failed) this.status.textContent = this.strings.searchFailed;
    else if (!results) this.status.textContent = "";
    else if (!results.length) this.status.textContent = this.strings.searchNone;
    else this.status.textContent = fill(this.strings.searchResults, { count: results.length });
  }

  result(hit) {
    const link = element("a", "search-hit");
    link.href = hit.url;
    link.appendChild(element("span", "search-title", hit.title || this.strings.untitled));
    if (hit.item_id !== null) {
      const snippet = element("span", "search-snippet");
      for (const [text, match] of hit.snippet) {
        snippet.appendChild(match ? element("mark", null, text) : document.createTextNode(text));
      }
      link.appendChild(snippet);
    }
    const li = element("li");
    li.appendChild(link);
    return li;
  }

  key(event) {
    const links = [...this.results.querySelectorAll("a")];
    const at = links.indexOf(document.activeElement);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!links.length) return;
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      const next = at + step;
      if (next < 0) this.input.focus();
      else links[Math.min(next, links.length - 1)].focus();
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation(); // not the page's Escape (stop a reply, close the sidebar)
      if (at >= 0) return this.input.focus();
      this.input.value = "";
      this.run();
    }
  }
}

/* A conversation whose title and messages both match is listed once, where its title
 * hit was (titles come first), with its newest matching message's snippet and link: the
 * answer lists a title hit and each message hit apart (chat/search.py). */
export function withTitlesMerged(results) {
  const firstMessage = new Map();
  for (const hit of results) {
    if (hit.item_id !== null && !firstMessage.has(hit.session_id)) firstMessage.set(hit.session_id, hit);
  }
  const merged = new Set(); // message hits shown in their title's place
  return results.flatMap((hit) => {
    if (hit.item_id !== null) return merged.has(hit) ? [] : [hit];
    const message = firstMessage.get(hit.session_id);
    if (message) merged.add(message);
    return [message || hit];
  });
}

/* The message of #item-<id>, once the page shows it: older pages asked for as needed. */
export function revealTarget() {
  const match = /^#item-(\d+)$/.exec(window.location.hash);
  if (!match) return;
  const started = Date.now();
  const look = setInterval(() => {
    const target = document.getElementById("item-" + match[1]);
    if (target) {
      clearInterval(look);
      target.classList.add("search-target");
      target.tabIndex = -1;
      target.scrollIntoView({ block: "center" });
      target.focus({ preventScroll: true });
      return;
    }
    const older = document.querySelector(".load-older");
    const shown = document.querySelector("#transcript article");
    if (shown && older && !older.hidden && !older.disabled) older.click();
    if (Date.now() - started > FIND_MS) clearInterval(look);
  }, FIND_EVERY_MS);
}

const form = document.getElementById("search-form");
if (form) {
  const strings = document.getElementById("chat-strings").dataset;
  const byId = (id) => document.getElementById(id);
  new Search(form, byId("search-input"), byId("search-results"), byId("search-status"), strings);
}
revealTarget();
