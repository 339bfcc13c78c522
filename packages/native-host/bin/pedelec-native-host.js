#!/usr/bin/env node
import "../dist/native-host-entry.bundle.cjs";
