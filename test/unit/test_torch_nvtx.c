/*
 * torch's operator ranges told from a program's NVTX ranges by their
 * message (common/torch_nvtx.h): every form torch 2.x's getNvtxStr
 * writes, and the near misses that must stay the program's ranges.
 */
#include "common/torch_nvtx.h"

#include "unit/unit.h"

static void check_op(const char *msg, const char *name, int64_t seq, uint64_t op_id,
		     const char *sizes)
{
	struct torch_nvtx_op op;
	CHECK(torch_nvtx_op_parse(msg, &op));
	CHECK(op.name_len == strlen(name) && strncmp(msg, name, op.name_len) == 0);
	CHECK(op.seq == seq && op.op_id == op_id);
	if (sizes)
		CHECK(op.sizes_len == strlen(sizes) &&
		      strncmp(msg + op.sizes_at, sizes, op.sizes_len) == 0);
	else
		CHECK(op.sizes_len == 0);
}

static void test_forms(void)
{
	check_op("aten::empty, op_id = 3", "aten::empty", -1, 3, NULL);
	check_op("aten::addmm, seq = 17, op_id = 40", "aten::addmm", 17, 40, NULL);
	check_op("aten::addmm, seq = 0, op_id = 1, sizes = [[256], [256, 1024], []]",
		 "aten::addmm", 0, 1, "[[256], [256, 1024], []]");
	check_op("aten::cat, op_id = 8, sizes = [[2, 3], [2, 3]], input_op_ids = [(6, 0), (7, 0)]",
		 "aten::cat", -1, 8, "[[2, 3], [2, 3]]");
	check_op("aten::ones, op_id = 9, input_op_ids = [(0, -1)]", "aten::ones", -1, 9, NULL);
	check_op("autograd::engine::evaluate_function: AddmmBackward0, seq = 5, op_id = 77",
		 "autograd::engine::evaluate_function: AddmmBackward0", 5, 77, NULL);
	/* names with commas, and with the marker's own text in them */
	check_op("Optimizer.step#SGD.step, op_id = 12", "Optimizer.step#SGD.step", -1, 12, NULL);
	check_op("my, op_id = x, op_id = 4", "my, op_id = x", -1, 4, NULL);
	check_op("a, seq = , op_id = 4", "a, seq = ", -1, 4, NULL);
	check_op("x, seq = 12345678901234567890, op_id = 4", "x, seq = 12345678901234567890", -1, 4,
		 NULL);
}

static void test_not_ops(void)
{
	static const char *const no[] = {
		"train_step", "", "aten::mm, seq = 3",              /* torch 1.13's form */
		", op_id = 5",                                       /* no name */
		"step, op_id = 0", "step, op_id = ", "step, op_id = 7 of 9",
		"step, op_id = 7, sizes = ", "step, op_id = 7, sizes = [[1]",
		"step, op_id = 7, input_op_ids = (1, 0)", "step, op_id = 99999999999999999999",
		"step, op_id = 7, seq = 3",
	};
	struct torch_nvtx_op op;
	for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
		int yes = torch_nvtx_op_parse(no[i], &op);
		CHECK(!yes);
		if (yes)
			fprintf(stderr, "  taken for an op: \"%s\"\n", no[i]);
	}
	CHECK(!torch_nvtx_op_parse(NULL, &op));
}

static void test_annotations(void)
{
	CHECK(torch_nvtx_is_annotation("Optimizer.step#SGD.step"));
	CHECK(torch_nvtx_is_annotation("my_region"));
	CHECK(torch_nvtx_is_annotation("BackwardCompatible check"));
	CHECK(!torch_nvtx_is_annotation("aten::mm"));
	CHECK(!torch_nvtx_is_annotation("torch::autograd::AccumulateGrad"));
	CHECK(!torch_nvtx_is_annotation("AddmmBackward0"));
	CHECK(!torch_nvtx_is_annotation("CompiledFunctionBackward"));
	CHECK(!torch_nvtx_is_annotation("autograd::engine::evaluate_function: MmBackward0"));
}

int main(void)
{
	test_forms();
	test_not_ops();
	test_annotations();
	return unit_done();
}
