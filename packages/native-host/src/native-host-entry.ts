import { runNativeHost } from "./native-host-main.js";

runNativeHost();
