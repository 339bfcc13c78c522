#!/usr/bin/env node
import "../dist/agent-commands/pedelec-cli.cjs";
