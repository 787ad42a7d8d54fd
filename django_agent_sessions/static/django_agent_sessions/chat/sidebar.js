/*
 * The sidebar: the user's conversations, pinned first, then most recently active, the
 * open one marked; archived ones only with "Show archived", and only one agent's when the
 * agent filter names one (keeping.js: the buttons and filters, GET conversations/).
 * It is refreshed once per run, as soon as the run's first output shows that the SDK
 * stored the user's message (before the first model call), and when the run ends: a new
 * conversation is listed, under the title of its first message, while its reply streams.
 */
import { element } from "./dom.js";
import { getJson } from "./http.js";
import { Keeping } from "./keeping.js";

export class Sidebar {
  constructor(list, toggle, config, strings, onCurrent) {
    this.list = list;
    this.toggle = toggle;
    this.config = config; // listUrl, sessionId, keepUrl
    this.strings = strings;
    this.onCurrent = onCurrent; // (title) => void: the open conversation, as listed
    this.listedRun = null;
    this.keeping = new Keeping(list, config, strings, () => this.refresh());
    toggle.addEventListener("click", () => this.toggleOpen());
  }

  /* Once per run: its first output (a delta, an item, an approval request). */
  listOnce(runId) {
    if (this.listedRun === runId) return;
    this.listedRun = runId;
    this.refresh();
  }

  /* A title written after the first exchange (`conversation.title`): shown at once. */
  titled(title) {
    this.onCurrent(title);
    this.refresh();
  }

  async refresh() {
    const data = await getJson(this.config.listUrl + this.keeping.query());
    if (!data) return;
    this.render(data.conversations || []);
    this.keeping.showAgents(data.agents || []);
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
      li.appendChild(this.keeping.buttons(conversation));
      if (conversation.pinned) li.dataset.pinned = "";
      if (conversation.archived) li.dataset.archived = "";
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
