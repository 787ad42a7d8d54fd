/*
 * Tool calls waiting for a person's decision (approval.requested, or the history frame's
 * pending_approvals): what the tool does (its description), its arguments as a person
 * reads them, and Approve / Reject; then the outcome (approval.resolved).
 */
import { element, prettyJson } from "./dom.js";

const MAX_LISTED_ARGUMENTS = 20;

/* A tool call's arguments as a person reads them: a list of names and values when they
 * are simple (an object of strings, numbers, booleans), else the JSON, indented. */
function argumentsView(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return element("pre", "payload", String(text));
  }
  const simple =
    value !== null && typeof value === "object" && !Array.isArray(value) &&
    Object.keys(value).length <= MAX_LISTED_ARGUMENTS &&
    Object.values(value).every((field) => field === null || typeof field !== "object");
  if (!simple) return element("pre", "payload", JSON.stringify(value, null, 2));
  const list = element("dl", "arguments");
  for (const [name, field] of Object.entries(value)) {
    list.appendChild(element("dt", null, name));
    list.appendChild(element("dd", null, typeof field === "string" ? field : JSON.stringify(field)));
  }
  return list;
}

export class Approvals {
  constructor(container, strings, append) {
    this.container = container;
    this.strings = strings;
    this.append = append; // (node) => node: into the transcript
  }

  show(request, onDecide) {
    const strings = this.strings;
    const existing = this.find(request.call_id);
    if (existing) return existing;
    const box = element("section", "entry approval");
    box.dataset.kind = "approval";
    box.dataset.callId = request.call_id;
    box.setAttribute("aria-label", strings.approvalNeeded + ": " + request.name);
    box.appendChild(element("h2", "approval-title", strings.approvalNeeded + ": " + request.name));
    if (request.description) {
      box.appendChild(element("p", "approval-description", request.description));
    }
    box.appendChild(argumentsView(request.arguments));
    const actions = element("div", "approval-actions");
    const approve = element("button", "approve-button", strings.approve);
    const reject = element("button", "reject-button", strings.reject);
    for (const [button, decision] of [[approve, true], [reject, false]]) {
      button.type = "button";
      button.addEventListener("click", () => {
        approve.disabled = reject.disabled = true;
        if (!onDecide(request.call_id, decision)) approve.disabled = reject.disabled = false;
      });
      actions.appendChild(button);
    }
    box.appendChild(actions);
    return this.append(box);
  }

  find(callId) {
    return Array.from(this.container.querySelectorAll("[data-kind='approval']")).find(
      (node) => node.dataset.callId === callId
    );
  }

  resolve(callId, approved, reason) {
    const box = this.find(callId);
    if (!box || box.dataset.decision) return;
    const strings = this.strings;
    box.dataset.decision = approved ? "approved" : "rejected";
    const outcome = approved ? strings.approved : reason === "expired" ? strings.expired : strings.rejected;
    const actions = box.querySelector(".approval-actions");
    if (actions) actions.replaceWith(element("p", "approval-outcome", outcome));
  }
}
