#!/usr/bin/env node
import "../dist/pedelec-cli-entry.js";
