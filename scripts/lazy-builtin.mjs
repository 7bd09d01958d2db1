// The stand-in for one of Node's built-in modules that the CLI bundle (scripts/bundle-cli.mjs)
// gives a dependency which requires it as it loads but uses it later or never: CommonJS source
// whose exports are the real module's members, loaded on first use. node:assert is a function:
// the stand-in lets a call with a true condition pass without loading it and hands any other to
// the real assert, which throws its own AssertionError.
export function lazyBuiltinSource(name) {
  const real = `(real ??= process.getBuiltinModule(${JSON.stringify(name)}))`;
  if (name === 'node:assert') {
    return `let real;\nmodule.exports = new Proxy(function assert(value) {}, { get: (_, key) => ${real}[key], apply: (_, self, args) => (args[0] ? undefined : Reflect.apply(${real}, self, args)) });\n`;
  }
  return `let real;\nmodule.exports = new Proxy({}, { get: (_, key) => ${real}[key] });\n`;
}
