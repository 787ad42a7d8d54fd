/*
 * Messages queued during a reply (AGENT_SESSIONS["WHILE_RUNNING"] = "queue"), listed under
 * the transcript as the server tells them: the history frame's `queued`, then each
 * `conversation.queue` (the whole queue, so a tab that missed one shows the truth at the
 * next). Each has Edit (its text in a labelled field, Save / Cancel) and Remove. A message
 * the server could not send (`refused`) comes back into the composer, with its reason.
 */
import { element } from "./dom.js";

export class QueuedMessages {
  constructor(section, strings, send, feedback, input) {
    this.section = section;
    this.list = section.querySelector("ol");
    this.strings = strings;
    this.send = send; // (frame) => bool
    this.feedback = feedback;
    this.input = input; // the composer's textarea
    this.editing = null; // {id, text}: the editor open, kept across updates
  }

  received(frame) {
    this.show(frame.queued || []);
    const refused = frame.refused;
    if (!refused) return;
    this.feedback.showError(refused.message || this.strings.actionFailed);
    if (!this.input.value.trim()) this.input.value = refused.text; // not lost: sent again from here
  }

  show(queued) {
    const focusedId = this.section.contains(document.activeElement)
      ? document.activeElement.closest("li")?.dataset.queuedId : null;
    this.list.replaceChildren();
    if (this.editing && !queued.some((message) => message.id === this.editing.id)) this.editing = null;
    for (const message of queued) {
      this.list.appendChild(this.editing?.id === message.id ? this.editor(message) : this.item(message));
    }
    this.section.hidden = queued.length === 0;
    // Focus stays where it was (the same message's control), else goes to the composer.
    const again = focusedId && this.list.querySelector(`li[data-queued-id="${focusedId}"] textarea, li[data-queued-id="${focusedId}"] button`);
    if (again) again.focus();
    else if (focusedId) this.input.focus();
  }

  item(message) {
    const li = element("li", "queued-message");
    li.dataset.queuedId = String(message.id);
    li.appendChild(element("p", "queued-text", message.text));
    const edit = element("button", "secondary", this.strings.edit);
    edit.type = "button";
    edit.setAttribute("aria-label", this.strings.editQueued + ": " + message.text);
    edit.addEventListener("click", () => this.startEdit(message));
    const remove = element("button", "secondary danger-outline", this.strings.removeQueued);
    remove.type = "button";
    remove.setAttribute("aria-label", this.strings.removeQueued + ": " + message.text);
    remove.addEventListener("click", () => {
      if (this.send({ type: "queue_remove", id: message.id })) this.input.focus();
    });
    li.append(edit, remove);
    return li;
  }

  editor(message) {
    const li = element("li", "queued-message is-editing");
    li.dataset.queuedId = String(message.id);
    const field = element("textarea", "queued-edit");
    field.id = "queued-edit-" + message.id;
    field.rows = 2;
    field.value = this.editing.text;
    field.addEventListener("input", () => { this.editing.text = field.value; });
    const label = element("label", "visually-hidden", this.strings.editQueued);
    label.htmlFor = field.id;
    const save = element("button", "primary", this.strings.save);
    save.type = "button";
    save.addEventListener("click", () => {
      const text = field.value;
      if (!text.trim()) return;
      if (this.send({ type: "queue_edit", id: message.id, text: text })) {
        this.editing = null;
        this.input.focus();
      }
    });
    const cancel = element("button", "secondary", this.strings.cancel);
    cancel.type = "button";
    cancel.addEventListener("click", () => this.endEdit(message));
    field.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.stopPropagation(); // not the page's Escape (Stop)
      this.endEdit(message);
    });
    li.append(label, field, save, cancel);
    return li;
  }

  startEdit(message) {
    this.editing = { id: message.id, text: message.text };
    const old = this.list.querySelector(`li[data-queued-id="${message.id}"]`);
    const editor = this.editor(message);
    old.replaceWith(editor);
    editor.querySelector("textarea").focus();
  }

  endEdit(message) {
    this.editing = null;
    const old = this.list.querySelector(`li[data-queued-id="${message.id}"]`);
    const item = this.item(message);
    old.replaceWith(item);
    item.querySelector("button").focus();
  }
}
