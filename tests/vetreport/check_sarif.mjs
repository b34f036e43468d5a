// Validates SARIF logs against the SARIF 2.1.0 JSON schema (the OASIS
// standard's final schema, 2.1.0-rtm.5, as @microsoft/jest-sarif ships it;
// pinned in package-lock.json) with ajv, for tests/vetreport_test.py.
//
// Usage: node check_sarif.mjs LOG.sarif...
// One JSON line per log: {file, valid, errors (ajv's, the first 20)}.
import fs from "node:fs";
import { createRequire } from "node:module";
import Ajv from "ajv-draft-04";
import addFormats from "ajv-formats";

const require = createRequire(import.meta.url);
const schemaPath = require.resolve("@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");
const schema = JSON.parse(fs.readFileSync(schemaPath, "utf8"));
// unicodeRegExp off: the schema's language pattern is no valid regular expression
// under the u flag (a stray "]"); without u it compiles as the schema's
// authors' validators read it
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats(ajv);
const validate = ajv.compile(schema);

for (const file of process.argv.slice(2)) {
  const log = JSON.parse(fs.readFileSync(file, "utf8"));
  const valid = validate(log);
  process.stdout.write(JSON.stringify({ file, schema: schema.title, valid,
    errors: (validate.errors || []).slice(0, 20) }) + "\n");
}
