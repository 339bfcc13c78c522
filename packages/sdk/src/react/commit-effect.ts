import { useEffect, useLayoutEffect } from "react";

/**
 * `useLayoutEffect` in the browser, `useEffect` on the server (where neither runs, and older React versions warn about
 * the layout one). Used to hand the latest props to code that runs later, before any passive effect of the same commit.
 */
export const useCommitEffect: typeof useLayoutEffect = typeof window === "undefined" ? useEffect : useLayoutEffect;
