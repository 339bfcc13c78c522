// Records keyed by origin, read by own keys only, so an origin spelled "__proto__" or "constructor" is just a key.

export function ownValue<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

export function withKey<T>(record: Record<string, T>, key: string, value: T): Record<string, T> {
  return Object.fromEntries([...Object.entries(record).filter(([candidate]) => candidate !== key), [key, value]]);
}

export function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  return Object.fromEntries(Object.entries(record).filter(([candidate]) => candidate !== key));
}
