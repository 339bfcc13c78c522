#!/usr/bin/env node
import "../dist/native-host-entry.js";
