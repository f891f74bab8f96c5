package frontend

import (
	"slices"
	"testing"
)

func TestSelects(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []Select
	}{
		{"triangle", "jgt %r1, 3, +1\nmov32 %r0, 0\nexit", []Select{{Jump: 0}}},
		{"triangle of a register", "jslt32 %r1, %r2, +1\nmov %r0, %r3\nexit", []Select{{Jump: 0}}},
		{"goto", "jgt %r1, 3, +3\nmov %r0, 1\nja +1\nmov %r0, 2\nexit", []Select{{Jump: 0, Goto: true}}},
		{"goto back", "mov %r0, 0\nadd %r0, 1\njlt %r0, 3, -2\nmov %r2, 0\nja -4\n", []Select{{Jump: 2, Goto: true}}},
		{"two in a row", "jgt %r1, 3, +1\nmov %r0, 0\njgt %r1, 4, +1\nmov %r2, 0\nexit",
			[]Select{{Jump: 0}, {Jump: 2}}},
		{"not a mov", "jgt %r1, 3, +1\nadd %r0, 1\nexit", nil},
		{"sign extension", "jgt %r1, 3, +1\nmovsx864 %r0, %r1\nexit", nil},
		{"mov is a target", "jgt %r1, 3, +2\njeq %r1, 0, +0\nmov %r0, 1\nexit", nil},
		{"jump past two", "jgt %r1, 3, +2\nmov %r0, 1\nmov %r2, 1\nexit", nil},
		{"goto elsewhere", "jgt %r1, 3, +2\nmov %r0, 1\nja +1\nexit\nexit", nil},
		{"goto is a target", "jeq %r1, 0, +2\njgt %r1, 3, +2\nmov %r0, 1\nja +0\nexit", nil},
		{"unconditional", "ja +1\nmov %r0, 1\nexit", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Analysis
			if err := a.Analyze(load(t, tc.src), Options{Selects: true}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Selects, tc.want) {
				t.Errorf("selects %v, want %v", a.Selects, tc.want)
			}
			for _, s := range tc.want {
				if got, ok := a.SelectAt(int(s.Jump)); !ok || got != s {
					t.Errorf("SelectAt(%d) = %v, %v", s.Jump, got, ok)
				}
			}
			if err := a.Analyze(load(t, tc.src), Options{}); err != nil || len(a.Selects) != 0 {
				t.Errorf("without Options.Selects: %v, %v", a.Selects, err)
			}
		})
	}
}
