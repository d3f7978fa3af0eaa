#!/bin/sh
# Appends the completion (JSON on stdin) to completed.jsonl in the project.
cat >> "$(dirname "$0")/../completed.jsonl"
echo >> "$(dirname "$0")/../completed.jsonl"
