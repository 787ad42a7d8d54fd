/*
 * The buttons under a message: Copy (and Copy on each code block); Edit on the user's
 * last message and Regenerate on the last reply (shown by the transcript while no run is
 * active); and "Branch from here" on each stored message of the user. Each action that
 * changes the conversation is an event on the transcript's container
 * (transcript:edit, transcript:regenerate, transcript:branch), with the message's article.
 */
import { copyText, element } from "./dom.js";

export class MessageActions {
  constructor(container, strings) {
    this.container = container;
    this.strings = strings;
  }

  bar(article, isUser) {
    const bar = element("div", "message-actions");
    const copy = this.button("action copy", this.strings.copy);
    copy.addEventListener("click", () => this.copyWithFeedback(copy, article.copyText));
    bar.appendChild(copy);
    const again = this.button("action " + (isUser ? "edit" : "regenerate"),
      isUser ? this.strings.edit : this.strings.regenerate);
    again.hidden = true; // only the last turn's, and only while no run is active
    again.addEventListener("click", () => this.tell(isUser ? "edit" : "regenerate", article));
    bar.appendChild(again);
    if (isUser) {
      const branch = this.button("action branch", this.strings.branch);
      branch.hidden = true; // once the message is stored (it has an id)
      branch.addEventListener("click", () => this.tell("branch", article));
      bar.appendChild(branch);
    }
    return bar;
  }

  /* A stored message of the user may be branched from. */
  stored(article, itemId) {
    const branch = article.querySelector(".action.branch");
    if (!branch || !itemId) return;
    article.dataset.itemId = itemId;
    branch.hidden = false;
  }

  button(className, label) {
    const button = element("button", className, label);
    button.type = "button";
    return button;
  }

  tell(action, article) {
    this.container.dispatchEvent(new CustomEvent("transcript:" + action, { detail: { article: article } }));
  }

  addCodeCopyButtons(root) {
    root.querySelectorAll("pre").forEach((pre) => {
      const wrapper = element("div", "code-block");
      pre.replaceWith(wrapper);
      wrapper.appendChild(pre);
      pre.tabIndex = 0; // it scrolls sideways: keyboard users must reach it too
      const button = this.button("action copy-code", this.strings.copyCode);
      button.addEventListener("click", () => this.copyWithFeedback(button, pre.textContent));
      wrapper.appendChild(button);
    });
  }

  async copyWithFeedback(button, text) {
    const label = button.textContent;
    try {
      await copyText(text);
      button.textContent = this.strings.copied;
    } catch (error) {
      return;
    }
    window.setTimeout(() => {
      button.textContent = label;
    }, 1500);
  }
}
