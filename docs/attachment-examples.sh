#!/usr/bin/env bash
# Attachments (README "Attachments"): a form with file fields, two uploads, a record referring to
# them, the record's JSON with the files' URLs, a download whole and by range, multipart uploads (one
# file; a record with its files), and a refusal. Against
# a default `npm start` (the seeded admin); needs curl, node and cmp. README.md shows this file as it
# is, and test/e2e/attachment-examples.e2e-spec.ts runs it against a started service.
BASE=${BASE:-http://localhost:3000}
json() { node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8'))$1"; }
TOKEN=$(curl -sS --fail-with-body "$BASE/auth/login" -H 'content-type: application/json' \
  -d '{"email": "admin@example.com", "password": "admin12345"}' | json .token)
AUTH="authorization: Bearer $TOKEN"
DIR=$(mktemp -d)

# A form whose `photo` takes one image of at most 5 MB, and `documents` up to 3 files of any type.
CONFIG=$(curl -sS --fail-with-body "$BASE/api/configs" -H "$AUTH" -H 'content-type: application/json' -d '{
  "title": "Claims", "type": "form",
  "schema": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"},
    "photo": {"type": "string", "format": "attachment", "x-mediaTypes": ["image/*"], "x-maxSize": 5242880},
    "documents": {"type": "array", "items": {"type": "string", "format": "attachment"}, "maxItems": 3}}}}' |
  json .id)

# Upload: the body is the file itself, streamed (curl -T streams from disk too); the name comes
# from ?filename= or a Content-Disposition header; the type is sniffed from the bytes.
node -e "require('fs').writeFileSync('$DIR/photo.png', Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAACAAFUok9dAAAAAElFTkSuQmCC', 'base64'))"
UPLOADED=$(curl -sS --fail-with-body -T "$DIR/photo.png" -X POST -H "$AUTH" -H 'content-type: image/png' \
  "$BASE/api/data/$CONFIG/attachments?field=photo&filename=claim.png")
echo "$UPLOADED"
PHOTO=$(echo "$UPLOADED" | json .attachmentId)
printf 'Hello, attachments' > "$DIR/note.txt"
NOTE=$(curl -sS --fail-with-body --data-binary @"$DIR/note.txt" -H "$AUTH" \
  -H "content-disposition: attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.txt" \
  "$BASE/api/data/$CONFIG/attachments?field=documents" | json .attachmentId)

# A record names its files by id; its JSON lists each with its metadata and download URL.
DATA=$(curl -sS --fail-with-body "$BASE/api/data/$CONFIG" -H "$AUTH" -H 'content-type: application/json' \
  -d "{\"name\": \"Ann\", \"photo\": \"$PHOTO\", \"documents\": [\"$NOTE\"]}" | json .dataId)
curl -sS --fail-with-body -H "$AUTH" "$BASE/api/data/$CONFIG/$DATA" | json .attachments

# Download (same access as the record): whole, byte for byte, then the first five bytes (206).
curl -sS --fail-with-body -H "$AUTH" -D - -o "$DIR/copy.png" "$BASE/api/data/$CONFIG/$DATA/attachments/$PHOTO"
cmp "$DIR/photo.png" "$DIR/copy.png" && echo 'photo.png downloaded byte for byte'
curl -sS --fail-with-body -H "$AUTH" -r 0-4 "$BASE/api/data/$CONFIG/$DATA/attachments/$NOTE"; echo

# Multipart (a browser form, curl -F): one file part, its part name the field, streamed as well.
curl -sS --fail-with-body -H "$AUTH" -F "photo=@$DIR/photo.png;filename=scan.png" \
  "$BASE/api/data/$CONFIG/attachments" | json .filename
# A record with its files in one request: a `record` part (JSON) and file parts named by field.
curl -sS --fail-with-body -H "$AUTH" -F 'record={"name": "Bob"}' -F "photo=@$DIR/photo.png" \
  -F "documents=@$DIR/note.txt" "$BASE/api/data/$CONFIG" |
  json ".data.attachments.map((file) => file.field + ' ' + file.filename).join(', ')"

# A text file is no image: 415 ATTACHMENT_TYPE_NOT_ALLOWED, and nothing is stored.
curl -sS -H "$AUTH" --data-binary @"$DIR/note.txt" "$BASE/api/data/$CONFIG/attachments?field=photo&filename=x.png"
echo
rm -r "$DIR"
