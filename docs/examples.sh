#!/usr/bin/env bash
# One short example per route group, in order, against a default `npm start` (the seeded admin
# admin@example.com / admin12345). It creates a role, users and a site with fixed names: run it once
# per fresh DATA_DIR, or change them. Needs curl and node. README.md shows this file as it is, and
# test/e2e/readme-examples.e2e-spec.ts runs it against a started service.
BASE=${BASE:-http://localhost:3000}
json() { node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8'))$1"; }
call() { curl -sS --fail-with-body -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' "$@"; echo; }

# Health: liveness and readiness (the database answers).
curl -sS --fail-with-body "$BASE/health/ready"; echo

# Log in; every later request sends the token as `Authorization: Bearer <token>`.
TOKEN=$(curl -sS --fail-with-body "$BASE/auth/login" -H 'content-type: application/json' \
  -d '{"email": "admin@example.com", "password": "admin12345"}' | json .token)
call "$BASE/auth/me"

# Configurations: a form with a JSON Schema, a validation rule and a computed value.
CONFIG=$(call "$BASE/api/configs" -d '{
  "title": "Orders", "type": "form", "tags": ["orders"],
  "schema": {"type": "object", "required": ["name", "qty"], "properties": {
    "name": {"type": "string", "minLength": 1}, "email": {"type": "string", "format": "email"},
    "qty": {"type": "integer", "minimum": 1}, "price": {"type": "number", "minimum": 0}, "city": {"type": "string"}}},
  "validationRules": [{"name": "maxQty", "field": "qty", "rule": {"<=": [{"var": "qty"}, 100]},
                       "message": {"en": "At most 100 pieces", "hu": "Legfeljebb 100 darab"}}],
  "computedRules": [{"field": "total", "expression": {"*": [{"var": "qty"}, {"var": "price"}]}}],
  "preferences": {"storeComputedResults": true}}' | json .id)
call "$BASE/api/configs?type=form&tags=orders"
# The form's own OpenAPI 3.1 document: its record routes, typed by its JSON Schema.
call "$BASE/api/configs/$CONFIG/openapi.json" | json .info.version

# Records: submit (validated), merge a change, list a page, filter.
DATA=$(call "$BASE/api/data/$CONFIG" -d '{"name": "Ann", "qty": 2, "price": 9.5, "city": "Pécs"}' | json .dataId)
call "$BASE/api/data/$CONFIG" -d '{"name": "Bob", "qty": 5, "price": 4, "city": "Győr"}'
call -X PATCH "$BASE/api/data/$CONFIG/$DATA" -d '{"qty": 3}'
call "$BASE/api/data/$CONFIG?page=1&limit=10&sortBy=qty&sortOrder=desc"
call -G "$BASE/api/data/$CONFIG" --data-urlencode 'filters={"city": "Győr"}'
# A refused submission answers 400 with the reasons per field (no --fail: the body is the point).
curl -sS "$BASE/api/data/$CONFIG" -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"name": "Eve", "qty": 500}'; echo

# Drafts (README "Drafts"): saved with types checked, submitted once complete.
# Save half a form: the required qty may wait; a wrong type would not (400).
DRAFT=$(curl -sS --fail-with-body "$BASE/api/data/$CONFIG?status=draft" -H "authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"name": "Dora"}' | json .dataId)
# Its submit is checked as a create: 422 DRAFT_INCOMPLETE lists what is missing; it stays a draft.
curl -sS -X POST "$BASE/api/data/$CONFIG/$DRAFT/submit" -H "authorization: Bearer $TOKEN"; echo
# Complete it (If-Match: the version read), submit it, and list the caller's drafts (none left).
curl -sS --fail-with-body -X PATCH "$BASE/api/data/$CONFIG/$DRAFT" -H "authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -H 'if-match: "1"' -d '{"qty": 1, "price": 3}'; echo
curl -sS --fail-with-body -X POST "$BASE/api/data/$CONFIG/$DRAFT/submit" -H "authorization: Bearer $TOKEN"; echo
curl -sS --fail-with-body "$BASE/api/data/$CONFIG?status=draft" -H "authorization: Bearer $TOKEN"; echo

# The grid form (docs/grid-protocol.md): skip/take, filter, sort, group and summaries ...
call -G "$BASE/api/data/$CONFIG" --data-urlencode 'skip=0' --data-urlencode 'take=20' \
  --data-urlencode 'requireTotalCount=true' --data-urlencode 'filter=["data.qty", ">=", 3]' \
  --data-urlencode 'sort=[{"selector": "data.qty", "desc": true}]' \
  --data-urlencode 'totalSummary=[{"selector": "data.total", "summaryType": "sum"}]'
call -G "$BASE/api/data/$CONFIG" --data-urlencode 'group=[{"selector": "data.city"}]' \
  --data-urlencode 'requireGroupCount=true'
# ... and the grid store's form-encoded edit: the changed fields, keyed by the grid's column names.
curl -sS --fail-with-body -X PUT "$BASE/api/data/$CONFIG" -H "authorization: Bearer $TOKEN" \
  --data-urlencode "key=$DATA" --data-urlencode 'values={"data.city": "Szeged"}'; echo

# Export: JSON (default), CSV with chosen columns, an XLSX workbook.
call "$BASE/api/data/$CONFIG/export?format=csv&columns=name,qty,city"
call "$BASE/api/data/$CONFIG/export?format=excel" -o "${TMPDIR:-/tmp}/orders.xlsx"

# Import: the export's CSV re-imports unchanged; here a file of two rows, one refused (qty 0). The
# 202 answer is an operation: the rows are stored in the background; read it back for the counts.
printf 'name,qty,price,city\nBea,2,4.5,Győr\nCsaba,0,1,Eger\n' > "${TMPDIR:-/tmp}/orders-import.csv"
IMPORT=$(curl -sS --fail-with-body -H "authorization: Bearer $TOKEN" -H 'content-type: text/csv' \
  -H 'idempotency-key: orders-import-1' --data-binary "@${TMPDIR:-/tmp}/orders-import.csv" \
  "$BASE/api/data/$CONFIG/import?mode=valid-rows" | json .id)
call "$BASE/api/data/imports/$IMPORT"

# Statistics: totals, per day and week (in tz), per user.
call "$BASE/api/data/$CONFIG/stats?tz=Europe/Budapest"

# Workflows: validate, save, reshape and thank the customer by e-mail (written to DATA_DIR/outbox
# when SMTP_URL is unset); run it, try it without storing anything, queue it, read its runs.
WORKFLOW=$(call "$BASE/api/workflow" -d '{
  "name": "Order intake", "type": "save", "permissions": {"roles": ["user"]},
  "config": {
    "retry": {"enabled": true, "maxAttempts": 3, "backoff": "exponential"},
    "errorHandling": {"strategy": "stop"},
    "steps": [
      {"name": "check", "type": "validate"},
      {"name": "store", "type": "save", "onError": "rollback"},
      {"name": "shape", "type": "transform", "config": {"mapping": {"customer": "name", "pieces": "qty"}}},
      {"name": "thanks", "type": "notify", "condition": "input.email",
       "config": {"email": {"to": "{{input.email}}", "subject": "Thanks for order {{savedData._id}}", "format": "html-table"}}}
    ]}}' | json .id)
ORDER='{"configId": "'$CONFIG'", "data": {"name": "Cecil", "qty": 1, "price": 20, "email": "cecil@example.com"}}'
call "$BASE/api/workflow/$WORKFLOW/execute" -d "$ORDER"
call "$BASE/api/workflow/$WORKFLOW/execute?dryRun=true" -d "$ORDER"
RUN=$(call "$BASE/api/workflow/$WORKFLOW/execute" -H 'Prefer: respond-async' -d "$ORDER" | json .runId)
call "$BASE/api/workflow/runs/$RUN"
call "$BASE/api/workflow/$WORKFLOW/runs?page=1&limit=10"

# Roles, form permissions, users, sites (admin).
call "$BASE/api/roles" -d '{"name": "auditor", "description": "Reads every order",
  "permissions": {"configs": ["read"], "data": ["read", "export"], "stats": ["read"]}}'
call -X PUT "$BASE/api/permissions/$CONFIG" -d '{"roles": {
  "user": ["viewForm", "createResults", "viewOwnResults", "executeWorkflows"],
  "auditor": ["viewForm", "viewAllResults", "exportResults", "viewStats"]}}'
SAM=$(call "$BASE/api/users" -d '{"email": "sam@example.com", "password": "sam-password-1", "name": "Sam",
  "role": "auditor"}' | json .id)
call "$BASE/api/sites" -d '{"name": "Shop", "domains": ["shop.localhost"]}'

# Webhooks (admin): subscribe a URL to record events (the answer shows the signing secret, once),
# rotate the secret, read the deliveries with their attempts.
HOOK=$(call "$BASE/api/webhooks" -d '{"url": "https://hooks.example.com/forms",
  "events": ["record.created", "record.updated"]}' | json .id)
call "$BASE/api/webhooks/$HOOK/rotate-secret" -d '{}'
call "$BASE/api/webhooks/$HOOK/deliveries"

# Self-registration (on by default) answers a token of a `user`, who sees the form the admin shared.
USER_TOKEN=$(curl -sS --fail-with-body "$BASE/auth/register" -H 'content-type: application/json' \
  -d '{"email": "ann@example.com", "password": "ann-password-1", "name": "Ann"}' | json .token)
curl -sS --fail-with-body "$BASE/api/permissions/$CONFIG/me" -H "authorization: Bearer $USER_TOKEN"; echo

# A configuration draft from sample rows (the built-in `infer` provider; no model needed).
call "$BASE/api/ai/configs/generate" -d '{"prompt": "Event registration",
  "samples": "name,email,age\nAnn,ann@example.com,34\nBob,bob@example.com,41"}'

# Erasure (admin): everything of a user, or a form's records holding a value (a data subject who
# is no user); it runs in the background: read it back, and the audit log of erasures.
ERASURE=$(call "$BASE/api/users/$SAM/erase" -d '{}' | json .id)
call "$BASE/api/data/$CONFIG/erase" -d '{"field": "name", "value": "Jane Roe"}'
call "$BASE/api/erasures/$ERASURE"
call "$BASE/api/erasures"

# Log out: the token stops working at once.
curl -sS --fail-with-body -X POST "$BASE/auth/logout" -H "authorization: Bearer $TOKEN"; echo
