// Validates Kubernetes objects against the API's schemas (kubernetes-models, generated from the
// OpenAPI spec): required fields, types, enums and formats. The schemas allow unknown fields, so
// a misspelt optional field passes here; test_manifests.py checks the fields that matter by name.
// Input on stdin: a JSON list of {"file", "object"}. Prints one line per problem, exits 1 if any.
import { readFileSync } from "node:fs";

const items = JSON.parse(readFileSync(0, "utf8"));
const problems = [];

async function modelFor(apiVersion, kind) {
  const groupVersion = apiVersion.includes("/") ? apiVersion : `v1`;
  try {
    const module = await import(`kubernetes-models/${groupVersion}/${kind}`);
    return module[kind];
  } catch {
    return null;
  }
}

for (const { file, object } of items) {
  const where = `${file}: ${object.kind}/${object.metadata?.name}`;
  const Model = await modelFor(object.apiVersion, object.kind);
  if (!Model) {
    problems.push(`${where}: no schema for ${object.apiVersion} ${object.kind}`);
    continue;
  }
  try {
    new Model(object).validate();
  } catch (e) {
    problems.push(`${where}: ${e.message}`);
  }
}
for (const p of problems) console.log(p);
console.log(`${items.length} objects, ${problems.length} problems`);
process.exit(problems.length ? 1 : 0);
