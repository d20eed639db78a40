// Read from disk (file://), a browser refuses the requests the search makes for each result's summary:
// there, the search lists its results without summaries instead of logging an error per result.
// (DOCUMENTATION_OPTIONS is a const of documentation_options.js, loaded before this file: not on window.)
if (window.location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
    DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}
