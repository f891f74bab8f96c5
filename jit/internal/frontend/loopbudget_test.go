package frontend

import (
	"slices"
	"strings"
	"testing"
)

func TestBudgetLoops(t *testing.T) {
	defer SetBudgetLoopMinTests(1)() // loops of one test, to show the rest
	justFits := "mov %r0, 0\n" + strings.Repeat("add %r0, 1\n", 63) + "jlt %r0, 1000, -64\nexit"
	long := "mov %r0, 0\n" + strings.Repeat("add %r0, 1\n", 64) + "jlt %r0, 1000, -65\nexit"
	for _, tc := range []struct {
		name, src string
		checked   bool // with hoisted checks
		want      []BudgetLoop
	}{
		{"counted", "mov %r0, 0\nadd %r0, 1\njlt %r0, 9, -2\nexit", false, []BudgetLoop{{Head: 1, End: 2, Cost: 2}}},
		{"two back edges", "mov %r0, 0\nadd %r0, 1\njeq %r0, 4, -2\njlt %r0, 9, -3\nexit", false, []BudgetLoop{{Head: 1, End: 3, Cost: 3}}},
		{"early exit", "mov %r0, 0\nadd %r0, 1\njeq %r0, 5, +1\nja -3\nexit", false, []BudgetLoop{{Head: 1, End: 3, Cost: 3}}},
		{"exit inside", "mov %r0, 0\nadd %r0, 1\njne %r0, 5, +1\nexit\nja -4", false, []BudgetLoop{{Head: 1, End: 4, Cost: 4}}},
		{"64 slots", justFits, false, []BudgetLoop{{Head: 1, End: 64, Cost: 64}}},
		{"65 slots", long, false, nil},
		{"inner loop", "mov %r0, 0\nmov %r1, 0\nadd %r1, 1\njlt %r1, 3, -2\nadd %r0, 1\njlt %r0, 3, -5\nexit", false,
			[]BudgetLoop{{Head: 2, End: 3, Cost: 2}}},
		{"helper call", "mov %r6, 0\ncall 1\nadd %r6, 1\njlt %r6, 3, -3\nexit", false, nil},
		{"local call", "mov %r6, 0\ncall local +4\nadd %r6, 1\njlt %r6, 3, -3\nmov %r0, 0\nexit\nmov %r0, 1\nexit", false, nil},
		{"packet load", "mov %r6, %r1\nmov %r7, 0\nldabsb 0\nadd %r7, 1\njlt %r7, 3, -3\nexit", false, nil},
		{"lddw inside", "mov %r0, 0\nlddw %r2, 0x100000000\nadd %r0, %r2\njlt %r0, 9, -4\nexit", false, []BudgetLoop{{Head: 1, End: 4, Cost: 4}}},
		{"hoisted checks", "mov %r2, 0\nmov %r0, 0\nmov %r3, %r1\nadd %r3, %r2\nldxb %r4, [%r3+0]\nadd %r0, %r4\nadd %r2, 1\njlt %r2, 8, -6\nexit", true, nil},
		{"unhoisted checks", "mov %r2, 0\nmov %r0, 0\nmov %r3, %r1\nadd %r3, %r2\nldxb %r4, [%r3+0]\nadd %r0, %r4\nadd %r2, 1\njlt %r2, 8, -6\nexit", false,
			[]BudgetLoop{{Head: 2, End: 7, Cost: 6}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Analysis
			if err := a.Analyze(load(t, tc.src), Options{LoopBudget: true, Hoist: tc.checked}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.BudgetLoops, tc.want) {
				t.Errorf("budget loops %v, want %v", a.BudgetLoops, tc.want)
			}
			for i, l := range tc.want {
				if got := a.BudgetLoopAt(int(l.Head)); got != i {
					t.Errorf("BudgetLoopAt(%d) = %d, want %d", l.Head, got, i)
				}
			}
			if err := a.Analyze(load(t, tc.src), Options{Hoist: tc.checked}); err != nil || len(a.BudgetLoops) != 0 {
				t.Errorf("without Options.LoopBudget: %v, %v", a.BudgetLoops, err)
			}
		})
	}
}

// A loop must make at least budgetLoopMinTests budget tests per
// iteration to get a copy; jumps out of the loop test only when taken.
func TestBudgetLoopMinTests(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"one", "mov %r0, 0\nadd %r0, 1\njlt %r0, 9, -2\nexit", 0},
		{"three and a jump out", "mov %r0, 0\nadd %r0, 1\njeq %r0, 3, +0\njeq %r0, 100, +3\njeq %r0, 5, +0\njlt %r0, 9, -5\nexit\nexit", 0},
		{"four", "mov %r0, 0\nadd %r0, 1\njeq %r0, 3, +0\njeq %r0, 4, +0\njeq %r0, 5, +0\njlt %r0, 9, -5\nexit", 1},
		{"goto back edge", "mov %r0, 0\nadd %r0, 1\njeq %r0, 3, +0\njeq %r0, 4, +0\njeq %r0, 9, +1\nja -5\nexit", 0},
	} {
		var a Analysis
		if err := a.Analyze(load(t, tc.src), Options{LoopBudget: true}); err != nil {
			t.Fatal(err)
		}
		if len(a.BudgetLoops) != tc.want {
			t.Errorf("%s: budget loops %v, want %d", tc.name, a.BudgetLoops, tc.want)
		}
	}
}
