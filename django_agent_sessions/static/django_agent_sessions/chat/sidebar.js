/*
 * The sidebar: the user's conversations, most recently active first, the open one marked.
 * It is refreshed once per run, as soon as the run's first output shows that the SDK
 * stored the user's message (before the first model call), and when the run ends: a new
 * conversation is listed, under the title of its first message, while its reply streams.
 */
import { element } from "./dom.js";
import { getJson } from "./http.js";

export class Sidebar {
  constructor(list, toggle, config, strings, onCurrent) {
    this.list = list;
    this.toggle = toggle;
    this.config = config; // listUrl, sessionId
    this.strings = strings;
    this.onCurrent = onCurrent; // (title) => void: the open conversation, as listed
    this.listedRun = null;
    toggle.addEventListener("click", () => this.toggleOpen());
  }

  /* Once per run: its first output (a delta, an item, an approval request). */
  listOnce(runId) {
    if (this.listedRun === runId) return;
    this.listedRun = runId;
    this.refresh();
  }

  async refresh() {
    const data = await getJson(this.config.listUrl);
    if (data) this.render(data.conversations || []);
  }

  render(conversations) {
    const items = conversations.map((conversation) => {
      const li = element("li");
      const link = element("a", null, conversation.title || this.strings.untitled);
      link.href = conversation.url;
      if (conversation.id === this.config.sessionId) {
        link.setAttribute("aria-current", "page");
        this.onCurrent(link.textContent);
      }
      li.appendChild(link);
      return li;
    });
    if (!items.length) items.push(element("li", "empty", this.strings.empty));
    this.list.replaceChildren(...items);
  }

  get isOpen() {
    return document.body.classList.contains("sidebar-open");
  }

  toggleOpen() {
    const open = !this.isOpen;
    this.toggle.setAttribute("aria-expanded", String(open));
    document.body.classList.toggle("sidebar-open", open);
  }
}
