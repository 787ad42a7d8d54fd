/*
 * What is left of the person's token budget, under the composer (QUOTAS["SHOW_REMAINING"]):
 * rendered with the page, and read again once a run ends (from any tab or worker).
 */
import { fill } from "./dom.js";
import { getJson } from "./http.js";

export class Budget {
  constructor(element, strings) {
    this.element = element; // null when the page shows no budget
    this.template = strings.budgetLeft;
  }

  async refresh() {
    if (!this.element) return;
    const budget = await getJson(this.element.dataset.url);
    if (!budget || budget.remaining === undefined) return; // kept as it was
    this.element.dataset.remaining = budget.remaining;
    this.element.dataset.resets = budget.resets;
    const locale = document.documentElement.lang || undefined;
    const tokens = new Intl.NumberFormat(locale).format(budget.remaining);
    this.element.textContent = fill(this.template, { tokens, time: budget.resets });
  }
}
