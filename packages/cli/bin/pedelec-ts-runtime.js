#!/usr/bin/env node
import "../dist/agent-commands/pedelec-ts-runtime.mjs";
