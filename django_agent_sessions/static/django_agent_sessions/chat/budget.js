/*
 * What is left of the person's token budget, under the composer (QUOTAS["SHOW_REMAINING"]):
 * the page renders it, and each reply's usage is taken off it until the next load.
 */
import { fill } from "./dom.js";

export class Budget {
  constructor(element, strings) {
    this.element = element; // null when the page shows no budget
    this.template = strings.budgetLeft;
    this.remaining = element ? Number(element.dataset.remaining) : 0;
  }

  spend(usage) {
    if (!this.element || !usage) return;
    this.show(this.remaining - (usage.total_tokens || 0));
  }

  exhausted() {
    if (this.element) this.show(0);
  }

  show(remaining) {
    this.remaining = Math.max(0, remaining);
    const locale = document.documentElement.lang || undefined;
    const tokens = new Intl.NumberFormat(locale).format(this.remaining);
    this.element.textContent = fill(this.template, { tokens, time: this.element.dataset.resets });
  }
}
