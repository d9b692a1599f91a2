#! /bin/bash
curl -fsS -X POST "$HOOK_URL" -d "deployed $1"
