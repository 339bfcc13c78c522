import type { PanelProvider, PanelProvidersAnswer, PanelSecret, PanelSettingChange } from "../control-panel-wire.js";
import { element, replaceChildren } from "./dom.js";
import { PanelRequestError, callPanel } from "./panel-client.js";

const LEVELS = ["low", "medium", "high"] as const;

/**
 * Providers with their availability, and the settings Core uses for the next session: defaults and each provider's
 * effort profiles. Every change is checked by Core; a refusal is shown next to its field with Core's message.
 */
export function mountProvidersPage(container: HTMLElement): () => void {
  const status = element("p", { "data-role": "status" }, "Looking for providers…");
  const defaults = element("section", { "data-role": "defaults" });
  const secrets = element("section", { "data-role": "secrets" });
  const providers = element("section", { "data-role": "providers" });
  replaceChildren(container, element("h1", {}, "Providers"), status, defaults, secrets, providers);

  /** Sends one change; its outcome goes to `problem` (the element next to the field). */
  const change = async (setting: PanelSettingChange, problem: HTMLElement): Promise<PanelProvidersAnswer | undefined> => {
    problem.textContent = "";
    try {
      const answer = await callPanel<PanelProvidersAnswer>("settings", { method: "PUT", body: setting });
      status.textContent = "Saved. The next session uses it.";
      return answer;
    } catch (error) {
      problem.textContent = error instanceof PanelRequestError ? `${error.message} [${error.code}]` : String(error);
      return undefined;
    }
  };

  const render = (answer: PanelProvidersAnswer): void => {
    renderDefaults(answer);
    replaceChildren(secrets, ...answer.secrets.map(secretSection));
    replaceChildren(providers, ...answer.providers.map((provider) => providerCard(provider, answer.settings.defaultModels[provider.code] ?? "")));
  };

  const renderDefaults = ({ providers: list, settings }: PanelProvidersAnswer): void => {
    const problem = element("span", { class: "problem", "data-role": "defaults-error" });
    const providerChoice = element(
      "select",
      { name: "defaultProvider" },
      element("option", { value: "" }, "(none)"),
      ...list.map((provider) => element("option", { value: provider.code, selected: provider.code === settings.defaultProvider }, provider.name)),
    );
    providerChoice.addEventListener(
      "change",
      () =>
        void change(
          { setting: "defaultProvider", value: providerChoice.value === "" ? null : (providerChoice.value as PanelProvider["code"]) },
          problem,
        ),
    );
    const effortChoice = element(
      "select",
      { name: "defaultEffortLevel" },
      ...LEVELS.map((level) => element("option", { value: level, selected: level === settings.defaultEffortLevel }, level)),
    );
    effortChoice.addEventListener(
      "change",
      () => void change({ setting: "defaultEffortLevel", value: effortChoice.value as (typeof LEVELS)[number] }, problem),
    );
    replaceChildren(
      defaults,
      element("h2", {}, "Defaults"),
      element("label", {}, "Default provider ", providerChoice),
      " ",
      element("label", {}, "Default effort ", effortChoice),
      " ",
      problem,
    );
  };

  /**
   * One provider secret (Ollama's API key): a password field whose value is sent once (PUT settings) and then cleared;
   * Core answers only whether one is set, so the page never holds or shows a stored secret.
   */
  const secretSection = (secret: PanelSecret): HTMLElement => {
    const role = secretRole(secret.key);
    const section = element("section", { "data-role": role });
    const render = (isSet: boolean): void => {
      const problem = element("span", { class: "problem", "data-role": `${role}-error` });
      const field = element("input", {
        type: "password",
        name: secretFieldName(secret.key),
        autocomplete: "off",
        spellcheck: "false",
        placeholder: isSet ? "one is set; type a new one to replace it" : "paste it here",
      });
      const form = element(
        "form",
        { "data-role": `${role}-form` },
        element("label", {}, `${secret.providerName} ${secret.label} `, field),
        " ",
        element("button", { type: "submit", "data-action": `save-${role}` }, "Save"),
        " ",
        element("button", { type: "button", "data-action": `clear-${role}`, disabled: !isSet }, "Remove"),
        " ",
        element("span", { class: "muted", "data-role": `${role}-state` }, isSet ? "set" : "not set"),
        " ",
        problem,
      );
      const send = async (value: string): Promise<void> => {
        field.value = "";
        const answer = await change({ setting: "providerSecret", key: secret.key, value }, problem);
        const now = answer?.secrets.find((candidate) => candidate.key === secret.key);
        if (now !== undefined) render(now.set);
      };
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        if (field.value === "") problem.textContent = "Type or paste it first (Remove clears it).";
        else void send(field.value);
      });
      form.querySelector(`[data-action="clear-${role}"]`)?.addEventListener("click", () => void send(""));
      replaceChildren(section, element("h2", {}, secret.providerName), element("p", { class: "muted" }, secret.description), form);
    };
    render(secret.set);
    return section;
  };

  const providerCard = (provider: PanelProvider, defaultModel: string): HTMLElement => {
    const modelProblem = element("span", { class: "problem", "data-role": "model-error" });
    const model = element("input", { type: "text", name: "defaultModel", placeholder: "the provider's own default", value: defaultModel });
    const saveModel = element("button", { type: "button", "data-action": "save-model" }, "Save model");
    saveModel.addEventListener(
      "click",
      () => void change({ setting: "defaultModel", provider: provider.code, value: model.value.trim() }, modelProblem),
    );
    return element(
      "article",
      { "data-provider": provider.code, class: provider.available ? "available" : "unavailable" },
      element("h2", {}, `${provider.name} `, element("code", {}, provider.code)),
      element(
        "dl",
        {},
        element("dt", {}, "Available"),
        element("dd", { "data-role": "availability" }, provider.available ? "yes" : `no — ${provider.error ?? "unknown reason"}`),
        element("dt", {}, "Version"),
        element("dd", {}, provider.version ?? "—"),
        element("dt", {}, "Executable"),
        element("dd", {}, provider.executablePath ?? "—"),
      ),
      element("div", {}, element("label", {}, "Default model ", model), " ", saveModel, " ", modelProblem),
      provider.supported
        ? element("div", { class: "profiles" }, ...LEVELS.map((level) => profileField(provider, level)))
        : element("p", {}, "Pedelec cannot drive this provider yet."),
    );
  };

  const profileField = (provider: PanelProvider, level: (typeof LEVELS)[number]): HTMLElement => {
    const profile = provider.effortProfiles[level];
    const field = element("input", { type: "text", name: `effort-${level}`, value: JSON.stringify(profile.tokens), spellcheck: "false" });
    const problem = element("span", { class: "problem", "data-role": "profile-error" });
    const save = element("button", { type: "button", "data-action": "save-profile" }, "Save");
    const reset = element("button", { type: "button", "data-action": "reset-profile", disabled: !profile.configured }, "Use default");
    const apply = async (tokens: string[] | null): Promise<void> => {
      const answer = await change({ setting: "effortProfile", provider: provider.code, level, tokens }, problem);
      if (answer !== undefined) render(answer);
    };
    save.addEventListener("click", () => {
      const tokens = parseTokens(field.value);
      if (typeof tokens === "string") problem.textContent = tokens;
      else void apply(tokens);
    });
    reset.addEventListener("click", () => void apply(null));
    return element(
      "div",
      { "data-level": level, class: "profile" },
      element("label", {}, `${level} `, field),
      " ",
      save,
      " ",
      reset,
      " ",
      element("span", { class: "muted" }, profile.configured ? "yours" : "default"),
      " ",
      problem,
    );
  };

  let stopped = false;
  void callPanel<PanelProvidersAnswer>("providers").then(
    (answer) => {
      if (stopped) return;
      status.textContent = "";
      render(answer);
    },
    (error: unknown) => (status.textContent = `Could not read providers: ${String(error)}`),
  );
  return () => {
    stopped = true;
  };
}

/** A JSON array of strings (as `pedelec config set` takes), or tokens separated by spaces; else why not. */
function parseTokens(text: string): string[] | string {
  const trimmed = text.trim();
  if (!trimmed.startsWith("[")) return trimmed === "" ? [] : trimmed.split(/\s+/);
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (Array.isArray(parsed) && parsed.every((token) => typeof token === "string")) return parsed;
  } catch {
    // Said below.
  }
  return 'Write a JSON array of strings, like ["--effort","high"], or tokens separated by spaces.';
}

/** The page's name for a secret's elements: `ollama.apiKey` → `ollama-api-key`. */
function secretRole(key: string): string {
  return key.replace(".", "-").replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** The password field's name: `ollama.apiKey` → `ollamaApiKey`. */
function secretFieldName(key: string): string {
  return key.replace(/\.(\w)/, (_dot, letter: string) => letter.toUpperCase());
}
