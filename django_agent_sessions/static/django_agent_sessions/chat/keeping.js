/*
 * Keeping conversations: the sidebar's Pin and Archive buttons on each conversation
 * (POST c/<id>/keep/, chat/keeping.py), "Show archived" and the agent filter, which
 * choose what GET conversations/ lists (and what the search finds: search.js reads the
 * same checkbox). Pressed buttons say the state (aria-pressed); a change lists again.
 */
import { element, fill } from "./dom.js";
import { post } from "./http.js";

export class Keeping {
  constructor(list, config, strings, changed) {
    this.config = config; // keepUrl (with SESSION_ID in it)
    this.strings = strings;
    this.changed = changed; // () => void: list again
    this.archived = document.getElementById("show-archived");
    this.agent = document.getElementById("agent-filter");
    if (this.archived) this.archived.addEventListener("change", () => changed());
    if (this.agent) this.agent.addEventListener("change", () => changed());
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-keep]");
      if (button) this.toggle(button);
    });
  }

  /* The list's query string: the filters as chosen. */
  query() {
    const query = new URLSearchParams();
    if (this.archived && this.archived.checked) query.set("archived", "1");
    if (this.agent && this.agent.value) query.set("agent", this.agent.value);
    const text = query.toString();
    return text ? "?" + text : "";
  }

  /* Pin and Archive for one listed conversation. Each is named with the title ("Pin
   * Weather in Lisbon"), so that a list of buttons read out of context says whose it is. */
  buttons(conversation) {
    const title = conversation.title || this.strings.untitled;
    const named = (template) => fill(template, { title });
    const span = element("span", "keep-actions");
    span.appendChild(this.button("pinned", this.strings.pin, named(this.strings.pinNamed), conversation));
    span.appendChild(this.button("archived", this.strings.archive, named(this.strings.archiveNamed), conversation));
    return span;
  }

  button(field, label, name, conversation) {
    const button = element("button", "keep", label);
    button.type = "button";
    button.dataset.keep = field;
    button.dataset.id = conversation.id;
    button.setAttribute("aria-label", name);
    button.setAttribute("aria-pressed", String(Boolean(conversation[field])));
    return button;
  }

  /* The agents the person's runs used, as the filter's options (the choice kept). */
  showAgents(agents) {
    if (!this.agent) return;
    const chosen = this.agent.value;
    const first = this.agent.options[0];
    const options = agents.map((name) => {
      const option = element("option", null, name);
      option.value = name;
      return option;
    });
    this.agent.replaceChildren(first, ...options);
    this.agent.value = agents.includes(chosen) ? chosen : "";
  }

  async toggle(button) {
    const url = this.config.keepUrl.replace("SESSION_ID", encodeURIComponent(button.dataset.id));
    const pressed = button.getAttribute("aria-pressed") === "true";
    button.disabled = true;
    const announcer = document.getElementById("announcer");
    const done = await post(url, { [button.dataset.keep]: pressed ? "0" : "1" }, {
      failed: () => { if (announcer) announcer.textContent = this.strings.actionFailed; },
      succeeded: () => {},
    });
    button.disabled = false;
    if (done) this.changed();
  }
}
