import type { PanelProvider, PanelProvidersAnswer, PanelSettingChange } from "../control-panel-wire.js";
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
  const ollamaKey = element("section", { "data-role": "ollama-api-key" });
  const providers = element("section", { "data-role": "providers" });
  replaceChildren(container, element("h1", {}, "Providers"), status, defaults, ollamaKey, providers);

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
    renderOllamaKey(answer.ollamaApiKeySet);
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
    providerChoice.addEventListener("change", () => void change({ setting: "defaultProvider", value: providerChoice.value === "" ? null : (providerChoice.value as PanelProvider["code"]) }, problem));
    const effortChoice = element("select", { name: "defaultEffortLevel" }, ...LEVELS.map((level) => element("option", { value: level, selected: level === settings.defaultEffortLevel }, level)));
    effortChoice.addEventListener("change", () => void change({ setting: "defaultEffortLevel", value: effortChoice.value as (typeof LEVELS)[number] }, problem));
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
   * The Ollama API key: a password field whose value is sent once (PUT settings) and then cleared; Core answers only
   * whether a key is set, so the page never holds or shows a stored key.
   */
  const renderOllamaKey = (keySet: boolean): void => {
    const problem = element("span", { class: "problem", "data-role": "ollama-api-key-error" });
    const field = element("input", { type: "password", name: "ollamaApiKey", autocomplete: "off", spellcheck: "false", placeholder: keySet ? "a key is set; type a new one to replace it" : "paste the key" });
    const form = element(
      "form",
      { "data-role": "ollama-api-key-form" },
      element("label", {}, "Ollama API key ", field),
      " ",
      element("button", { type: "submit", "data-action": "save-ollama-api-key" }, "Save key"),
      " ",
      element("button", { type: "button", "data-action": "clear-ollama-api-key", disabled: !keySet }, "Remove key"),
      " ",
      element("span", { class: "muted", "data-role": "ollama-api-key-state" }, keySet ? "set" : "not set"),
      " ",
      problem,
    );
    const send = async (value: string): Promise<void> => {
      field.value = "";
      const answer = await change({ setting: "ollamaApiKey", value }, problem);
      if (answer !== undefined) renderOllamaKey(answer.ollamaApiKeySet);
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (field.value === "") problem.textContent = "Type or paste a key first (Remove key clears it).";
      else void send(field.value);
    });
    form.querySelector('[data-action="clear-ollama-api-key"]')?.addEventListener("click", () => void send(""));
    replaceChildren(
      ollamaKey,
      element("h2", {}, "Ollama"),
      element("p", { class: "muted" }, "The key Pedelec's agent sends to Ollama (ollama.com or your own server). It is stored in settings.json (0600) and never shown again."),
      form,
    );
  };

  const providerCard = (provider: PanelProvider, defaultModel: string): HTMLElement => {
    const modelProblem = element("span", { class: "problem", "data-role": "model-error" });
    const model = element("input", { type: "text", name: "defaultModel", placeholder: "the provider's own default", value: defaultModel });
    const saveModel = element("button", { type: "button", "data-action": "save-model" }, "Save model");
    saveModel.addEventListener("click", () => void change({ setting: "defaultModel", provider: provider.code, value: model.value.trim() }, modelProblem));
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
      provider.supported ? element("div", { class: "profiles" }, ...LEVELS.map((level) => profileField(provider, level))) : element("p", {}, "Pedelec cannot drive this provider yet."),
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
