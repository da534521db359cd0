import GraphVault
import Testing

@Suite("Data subsets of a location's check")
struct DataSubsetTests {
  @Test func theRunsOfACycleReadEveryArchiveExactlyOnce() throws {
    let names = (0..<500).map { "App-2026\(String(format: "%04d", $0))T031500.000Z.gvault" }
    for runs in [1, 2, 3, 7, 30] {
      let subsets = (1...runs).map { DataSubset(run: $0, of: runs)! }
      for name in names {
        #expect(subsets.filter { $0.contains(name) }.count == 1, "\(name) in \(runs) runs")
      }
      // No run is left without work by a skewed rule (500 names, at most 30 runs).
      #expect(subsets.allSatisfy { subset in names.contains(where: subset.contains) })
    }
  }

  @Test func anArchiveKeepsItsSubsetWhateverElseTheLocationHolds() {
    let subset = DataSubset(run: 2, of: 5)!
    // The rule reads the name alone: the same answer asked twice, in any company.
    #expect(subset.contains("a.gvault") == DataSubset("2/5")!.contains("a.gvault"))
    let chosen = (0..<50).map { "n\($0).gvault" }.filter(subset.contains)
    let again = (0..<50).reversed().map { "n\($0).gvault" }.filter(subset.contains)
    #expect(Set(chosen) == Set(again))
  }

  @Test func onlyNOverTWithNFromOneToTIsASubset() {
    #expect(DataSubset("1/7") == DataSubset(run: 1, of: 7))
    #expect(DataSubset("7/7")?.description == "7/7")
    for text in ["0/7", "8/7", "1/0", "-1/3", "1/", "/3", "a/b", "1/2/3", "", "1 /2", "50%"] {
      #expect(DataSubset(text) == nil, "\(text)")
    }
  }
}
