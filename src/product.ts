/**
 * The one name a person reads: the footer, the tool row's label, report
 * titles and notices say "pi-fold". Wire identifiers keep the spec's
 * spelling (`details.compactor: "fabric"`, `pi-fabric.branch-summary`,
 * `__pi_vcc__`, the compaction engine value `"fabric"`); README "Names"
 * explains the one place a person can meet them (settings JSON).
 */
export const PRODUCT_NAME = "pi-fold";
