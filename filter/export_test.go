package filter

// Estimate is the instruction count the cost model predicts for expr, or
// -1 when it does not parse.
func Estimate(expr string, fields []Field) int {
	lim, _ := Limits{}.resolve()
	n, err := parse(expr, fields, &lim)
	if err != nil {
		return -1
	}
	total, _ := estimate(n)
	return total
}
