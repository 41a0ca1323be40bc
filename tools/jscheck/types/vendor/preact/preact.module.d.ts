// static/js/view.js imports the vendored Preact build (static/vendor/preact/
// preact.module.js, minified); jsconfig.json's rootDirs resolve that import here, so the
// check reads the types of the same version's npm package (tools/jscheck/package.json)
// instead of the build itself.
export * from "preact";
