// A small stand-in for the DOM the extension's pages render into: enough of Document and Element for the view code,
// plus querySelector(All) for compound selectors joined by descendant spaces (tag, .class, [attr], [attr="value"]).

type FakeNode = FakeElement | string;

export class FakeElement {
  readonly tagName: string;
  readonly dataset: Record<string, string> = {};
  readonly attributes = new Map<string, string>();
  childNodes: FakeNode[] = [];
  parent: FakeElement | undefined;
  className = "";
  hidden = false;
  type = "";
  disabled = false;
  id = "";

  constructor(tagName: string) {
    this.tagName = tagName.toUpperCase();
  }

  get children(): FakeElement[] {
    return this.childNodes.filter((node): node is FakeElement => node instanceof FakeElement);
  }

  get classList() {
    return {
      contains: (name: string) => this.className.split(/\s+/).includes(name),
      toggle: (name: string, force?: boolean) => {
        const names = new Set(this.className.split(/\s+/).filter(Boolean));
        const on = force ?? !names.has(name);
        if (on) names.add(name);
        else names.delete(name);
        this.className = [...names].join(" ");
        return on;
      },
    };
  }

  get textContent(): string {
    return this.childNodes.map((node) => (typeof node === "string" ? node : node.textContent)).join("");
  }

  set textContent(text: string) {
    this.replaceChildren(text);
  }

  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }

  getAttribute(name: string): string | null {
    if (name.startsWith("data-")) return this.dataset[dataKey(name)] ?? null;
    if (name === "class") return this.className || null;
    if (name === "id") return this.id || null;
    return this.attributes.get(name) ?? null;
  }

  append(...nodes: FakeNode[]): void {
    for (const node of nodes) {
      if (node instanceof FakeElement) {
        node.parent?.removeChild(node);
        node.parent = this;
      }
      this.childNodes.push(node);
    }
  }

  replaceChildren(...nodes: FakeNode[]): void {
    for (const node of this.childNodes) if (node instanceof FakeElement) node.parent = undefined;
    this.childNodes = [];
    this.append(...nodes);
  }

  removeChild(child: FakeElement): void {
    this.childNodes = this.childNodes.filter((node) => node !== child);
    child.parent = undefined;
  }

  matches(selector: string): boolean {
    const parts = splitSelector(selector);
    const last = parts.pop();
    if (last === undefined || !matchesCompound(this, last)) return false;
    let ancestor = this.parent;
    for (const part of parts.reverse()) {
      while (ancestor && !matchesCompound(ancestor, part)) ancestor = ancestor.parent;
      if (!ancestor) return false;
      ancestor = ancestor.parent;
    }
    return true;
  }

  closest(selector: string): FakeElement | null {
    for (let element: FakeElement | undefined = this; element; element = element.parent) {
      if (element.matches(selector)) return element;
    }
    return null;
  }

  querySelectorAll(selector: string): FakeElement[] {
    return this.#descendants().filter((element) => element.matches(selector));
  }

  querySelector(selector: string): FakeElement | null {
    return this.querySelectorAll(selector)[0] ?? null;
  }

  #descendants(): FakeElement[] {
    return this.children.flatMap((child) => [child, ...child.#descendants()]);
  }
}

export class FakeDocument {
  readonly body = new FakeElement("body");

  createElement(tagName: string): FakeElement {
    return new FakeElement(tagName);
  }

  getElementById(id: string): FakeElement | null {
    return this.body.querySelectorAll("*").find((element) => element.id === id) ?? null;
  }

  querySelectorAll(selector: string): FakeElement[] {
    return this.body.querySelectorAll(selector);
  }

  querySelector(selector: string): FakeElement | null {
    return this.body.querySelector(selector);
  }

  /** This document typed as the DOM's, for code that takes a Document. */
  asDocument(): Document {
    return this as unknown as Document;
  }
}

/** A document shaped like options.html: the site list, the refused list in a hidden section, and a status line. */
export function optionsDocument(): FakeDocument {
  const document = new FakeDocument();
  const element = (tagName: string, id?: string): FakeElement => {
    const created = document.createElement(tagName);
    if (id) created.id = id;
    return created;
  };
  const sites = element("section");
  sites.append(element("ul", "origins"));
  const refused = element("section");
  refused.hidden = true;
  refused.append(element("ul", "refused"));
  document.body.append(sites, refused, element("p", "status"));
  return document;
}

function dataKey(attribute: string): string {
  return attribute.slice("data-".length).replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

function splitSelector(selector: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (const character of selector.trim()) {
    if (quote) {
      if (character === quote) quote = undefined;
      current += character;
    } else if (character === '"' || character === "'") {
      quote = character;
      current += character;
    } else if (/\s/.test(character)) {
      if (current) parts.push(current);
      current = "";
    } else {
      current += character;
    }
  }
  if (current) parts.push(current);
  return parts;
}

function matchesCompound(element: FakeElement, compound: string): boolean {
  const pattern = /^([a-zA-Z*][a-zA-Z0-9]*)?((?:\.[\w-]+|#[\w-]+|\[[\w-]+(?:="[^"]*")?\])*)$/;
  const parsed = pattern.exec(compound);
  if (!parsed) throw new Error(`the fake DOM does not understand the selector "${compound}"`);
  const [, tag, rest = ""] = parsed;
  if (tag && tag !== "*" && tag.toUpperCase() !== element.tagName) return false;
  for (const [token] of rest.matchAll(/\.[\w-]+|#[\w-]+|\[[\w-]+(?:="[^"]*")?\]/g)) {
    if (token.startsWith(".")) {
      if (!element.classList.contains(token.slice(1))) return false;
    } else if (token.startsWith("#")) {
      if (element.id !== token.slice(1)) return false;
    } else {
      const [, name = "", value] = /^\[([\w-]+)(?:="([^"]*)")?\]$/.exec(token) ?? [];
      const actual = element.getAttribute(name);
      if (actual === null || (value !== undefined && actual !== value)) return false;
    }
  }
  return true;
}
