#!/usr/bin/env node
import "../dist/pedelec-entry.js";
