// Package magentest tests magen workflows the way they run in production:
// through the real orchestrator and the real MCP tool (mcp-go's in-process
// client), with only the LLM faked.
//
// It is modelled on net/http/httptest. The core values (LLM, Harness,
// CheckGolden, Lint, TestCheckpointer) work without a *testing.T and
// report problems as errors. A thin testing.TB layer (Harness.Play,
// RunScenarios, RunCheckpointerTests) reports them on the test goroutine.
//
// A table of scenarios for a branching workflow:
//
//	func TestReview(t *testing.T) {
//		magentest.RunScenarios(t, reviewGraph, []magentest.Scenario[Doc]{{
//			Name:  "approved at once",
//			Start: Doc{Topic: "Go"},
//			Turns: []magentest.Turn{
//				magentest.Answer("draft", Draft{Text: "Go is fun."}),
//				magentest.Answer("review", Review{Approved: true}),
//			},
//			Want: Doc{Topic: "Go", Text: "Go is fun.", Approved: true},
//		}, {
//			Name:  "bad answer repaired",
//			Start: Doc{Topic: "Go"},
//			Turns: []magentest.Turn{
//				magentest.Invalid("draft", map[string]any{"text": 42}),
//				magentest.Answer("draft", Draft{Text: "Go."}),
//				magentest.Answer("review", Review{Approved: true}),
//			},
//			Want: Doc{Topic: "Go", Text: "Go.", Approved: true},
//		}})
//	}
//
// Every scripted turn remembers the file and line that created it, so a
// failure points at the table row that caused it.
package magentest
