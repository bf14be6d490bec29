// ESLint for the explorer's browser modules (smemviz/explorer/*.js): ES modules
// that anywidget loads into JupyterLab's page. tests/explorer/test_js_lint.py runs
// it; the versions are pinned in package.json and package-lock.json (npm ci).
import js from "@eslint/js";
import globals from "globals";

export default [
  // vendor/: third-party bundles shipped as they come (plotly.js's basic bundle)
  { ignores: ["node_modules/**", ".venv/**", "build/**", "dist/**", "smemviz/explorer/vendor/**"] },
  js.configs.recommended,
  {
    files: ["smemviz/explorer/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    rules: {
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": "error",
      "no-unused-vars": ["error", { args: "after-used", argsIgnorePattern: "^_" }],
      "no-implicit-globals": "error",
      "no-shadow": "error",
      "no-use-before-define": ["error", { functions: false }],
      curly: ["error", "multi-line"],
    },
  },
];
