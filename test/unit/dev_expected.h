/* The expected device outputs of test_out_device.c's synthetic run, byte
 * for byte (ts 0 is 10 s before the run's events, so times read 10000xxx).
 * Checked by hand: see the comments in test_out_device.c. */
#ifndef PROF_TEST_DEV_EXPECTED_H
#define PROF_TEST_DEV_EXPECTED_H

static const char *const want_kernel =
	"Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats\n"
	"1,0,N/A,1,1,gemm,KERNEL,N/A,SIM,10000002.000,3.000,0.000,8,N/A,N/A,\"[[64, 128]]\",\"[\"\"float\"\"]\",N/A,N/A,N/A,N/A\n"
	"1,0,N/A,3,2,Memcpy HtoD,MEMCPY,N/A,SIM,10000003.800,1.000,0.000,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n"
	"1,0,N/A,2,1,bias,KERNEL,N/A,SIM,10000005.000,1.000,0.000,0,N/A,N/A,\"[[64, 128]]\",\"[\"\"float\"\"]\",N/A,N/A,N/A,N/A\n"
	"1,0,N/A,4,1,k3,KERNEL,N/A,SIM,10000006.000,1.000,0.000,0,N/A,N/A,[[8]],N/A,N/A,N/A,N/A,N/A\n"
	"1,0,N/A,5,3,allreduce,COMMUNICATION,N/A,SIM,10000006.500,2.500,0.000,0,N/A,N/A,[[8]],N/A,N/A,N/A,N/A,N/A\n"
	"2,0,N/A,6,1,relu_k,KERNEL,N/A,SIM,10000011.500,1.000,4.500,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n"
	"2,0,N/A,7,3,recv,COMMUNICATION,N/A,SIM,10000013.000,3.000,4.000,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n"
	"2,0,N/A,8,1,late_k,KERNEL,N/A,SIM,10000019.000,2.000,6.500,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n"
	"3,0,N/A,0,1,k5,KERNEL,N/A,SIM,10000025.000,1.000,4.000,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n"
	"3,0,N/A,0,3,send,COMMUNICATION,N/A,SIM,10000026.000,1.000,10.000,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n";

static const char *const want_api =
	"Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n"
	"host,Runtime,sim_kernel,0.550,5,0.110,0.100,0.150,0.000\n"
	"host,Runtime,sim_memcpy,0.500,1,0.500,0.500,0.500,0.000\n"
	"host,Runtime,sim_sync,0.400,1,0.400,0.400,0.400,0.000\n"
	"host,Runtime,sim_collective,0.200,2,0.100,0.100,0.100,0.000\n";

static const char *const want_memrec =
	"Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\n"
	"SIM,10000001.150,2.000,2.000,2.000,0,SIM:0\n"
	"SIM,10000003.650,3.000,3.000,3.000,0,SIM:0\n"
	"SIM,10000012.000,1.000,1.000,1.000,0,SIM:0\n";

static const char *const want_memop =
	"Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type\n"
	"aten::addmm,2048.000,10000001.150,10000012.000,10000012.000,10.850,10.850,2.000,2.000,2.000,1.000,1.000,1.000,0,SIM:0\n"
	"aten::copy_,1024.000,10000003.650,,,,,3.000,3.000,3.000,,,,0,SIM:0\n";

static const char *const want_comm =
	"{\n"
	"  \"step1\": {\n"
	"    \"p2p\": {},\n"
	"    \"collective\": {\n"
	"      \"allreduce__700_1@default_group\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 10000006.500, \"Elapse Time(ms)\": 0.002500, \"Transit Time(ms)\": 0.002500, \"Wait Time(ms)\": 0.000000, \"Synchronization Time(ms)\": 0.000000, \"Idle Time(ms)\": 0.000000, \"Wait Time Ratio\": 0.0000, \"Synchronization Time Ratio\": 0.0000}, \"Communication Bandwidth Info\": {\"SIM\": {\"Transit Size(MB)\": 4.000000, \"Transit Time(ms)\": 0.002500, \"Bandwidth(GB/s)\": 1562.5000, \"Large Packet Ratio\": 0.0000, \"Size Distribution\": {\"4.000000\": [1, 0.002500]}}}},\n"
	"      \"Total Op Info\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 10000006.500, \"Elapse Time(ms)\": 0.002500, \"Transit Time(ms)\": 0.002500, \"Wait Time(ms)\": 0.000000, \"Synchronization Time(ms)\": 0.000000, \"Idle Time(ms)\": 0.000000, \"Wait Time Ratio\": 0.0000, \"Synchronization Time Ratio\": 0.0000}, \"Communication Bandwidth Info\": {\"SIM\": {\"Transit Size(MB)\": 4.000000, \"Transit Time(ms)\": 0.002500, \"Bandwidth(GB/s)\": 1562.5000, \"Large Packet Ratio\": 0.0000, \"Size Distribution\": {\"4.000000\": [1, 0.002500]}}}}\n"
	"    }\n"
	"  },\n"
	"  \"step2\": {\n"
	"    \"p2p\": {\n"
	"      \"recv__700_1@pp\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 10000013.000, \"Elapse Time(ms)\": 0.003000, \"Transit Time(ms)\": 0.003000, \"Wait Time(ms)\": 0.000000, \"Synchronization Time(ms)\": 0.000000, \"Idle Time(ms)\": 0.000000, \"Wait Time Ratio\": 0.0000, \"Synchronization Time Ratio\": 0.0000}, \"Communication Bandwidth Info\": {\"SIM\": {\"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.003000, \"Bandwidth(GB/s)\": 325.5208, \"Large Packet Ratio\": 0.0000, \"Size Distribution\": {\"1.000000\": [1, 0.003000]}}}},\n"
	"      \"Total Op Info\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 10000013.000, \"Elapse Time(ms)\": 0.003000, \"Transit Time(ms)\": 0.003000, \"Wait Time(ms)\": 0.000000, \"Synchronization Time(ms)\": 0.000000, \"Idle Time(ms)\": 0.000000, \"Wait Time Ratio\": 0.0000, \"Synchronization Time Ratio\": 0.0000}, \"Communication Bandwidth Info\": {\"SIM\": {\"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.003000, \"Bandwidth(GB/s)\": 325.5208, \"Large Packet Ratio\": 0.0000, \"Size Distribution\": {\"1.000000\": [1, 0.003000]}}}}\n"
	"    },\n"
	"    \"collective\": {}\n"
	"  },\n"
	"  \"step3\": {\n"
	"    \"p2p\": {\n"
	"      \"send__700_2@pp\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 10000026.000, \"Elapse Time(ms)\": 0.001000, \"Transit Time(ms)\": 0.001000, \"Wait Time(ms)\": 0.000000, \"Synchronization Time(ms)\": 0.000000, \"Idle Time(ms)\": 0.000000, \"Wait Time Ratio\": 0.0000, \"Synchronization Time Ratio\": 0.0000}, \"Communication Bandwidth Info\": {\"SIM\": {\"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.001000, \"Bandwidth(GB/s)\": 976.5625, \"Large Packet Ratio\": 0.0000, \"Size Distribution\": {\"1.000000\": [1, 0.001000]}}}},\n"
	"      \"Total Op Info\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 10000026.000, \"Elapse Time(ms)\": 0.001000, \"Transit Time(ms)\": 0.001000, \"Wait Time(ms)\": 0.000000, \"Synchronization Time(ms)\": 0.000000, \"Idle Time(ms)\": 0.000000, \"Wait Time Ratio\": 0.0000, \"Synchronization Time Ratio\": 0.0000}, \"Communication Bandwidth Info\": {\"SIM\": {\"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.001000, \"Bandwidth(GB/s)\": 976.5625, \"Large Packet Ratio\": 0.0000, \"Size Distribution\": {\"1.000000\": [1, 0.001000]}}}}\n"
	"    },\n"
	"    \"collective\": {}\n"
	"  }\n"
	"}\n";

static const char *const want_matrix =
	"{\n"
	"  \"step1\": {\n"
	"    \"p2p\": {},\n"
	"    \"collective\": {\n"
	"      \"allreduce-top1@default_group\": {\n"
	"        \"0-0\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 4.000000, \"Transit Time(ms)\": 0.002500, \"Bandwidth(GB/s)\": 1562.5000, \"Op Name\": \"allreduce__700_1\"}\n"
	"      },\n"
	"      \"allreduce-middle@default_group\": {\n"
	"        \"0-0\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 4.000000, \"Transit Time(ms)\": 0.002500, \"Bandwidth(GB/s)\": 1562.5000, \"Op Name\": \"allreduce__700_1\"}\n"
	"      },\n"
	"      \"allreduce-bottom1@default_group\": {\n"
	"        \"0-0\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 4.000000, \"Transit Time(ms)\": 0.002500, \"Bandwidth(GB/s)\": 1562.5000, \"Op Name\": \"allreduce__700_1\"}\n"
	"      },\n"
	"      \"allreduce-total@default_group\": {\n"
	"        \"0-0\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 4.000000, \"Transit Time(ms)\": 0.002500, \"Bandwidth(GB/s)\": 1562.5000, \"Op Name\": \"\"}\n"
	"      }\n"
	"    }\n"
	"  },\n"
	"  \"step2\": {\n"
	"    \"p2p\": {\n"
	"      \"receive-top1@pp\": {\n"
	"        \"0-1\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.003000, \"Bandwidth(GB/s)\": 325.5208, \"Op Name\": \"recv__700_1\"}\n"
	"      },\n"
	"      \"receive-middle@pp\": {\n"
	"        \"0-1\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.003000, \"Bandwidth(GB/s)\": 325.5208, \"Op Name\": \"recv__700_1\"}\n"
	"      },\n"
	"      \"receive-bottom1@pp\": {\n"
	"        \"0-1\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.003000, \"Bandwidth(GB/s)\": 325.5208, \"Op Name\": \"recv__700_1\"}\n"
	"      },\n"
	"      \"receive-total@pp\": {\n"
	"        \"0-1\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.003000, \"Bandwidth(GB/s)\": 325.5208, \"Op Name\": \"\"}\n"
	"      }\n"
	"    },\n"
	"    \"collective\": {}\n"
	"  },\n"
	"  \"step3\": {\n"
	"    \"p2p\": {\n"
	"      \"send-top1@pp\": {\n"
	"        \"1-0\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.001000, \"Bandwidth(GB/s)\": 976.5625, \"Op Name\": \"send__700_2\"}\n"
	"      },\n"
	"      \"send-middle@pp\": {\n"
	"        \"1-0\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.001000, \"Bandwidth(GB/s)\": 976.5625, \"Op Name\": \"send__700_2\"}\n"
	"      },\n"
	"      \"send-bottom1@pp\": {\n"
	"        \"1-0\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.001000, \"Bandwidth(GB/s)\": 976.5625, \"Op Name\": \"send__700_2\"}\n"
	"      },\n"
	"      \"send-total@pp\": {\n"
	"        \"1-0\": {\"Transport Type\": \"SIM\", \"Transit Size(MB)\": 1.000000, \"Transit Time(ms)\": 0.001000, \"Bandwidth(GB/s)\": 976.5625, \"Op Name\": \"\"}\n"
	"      }\n"
	"    },\n"
	"    \"collective\": {}\n"
	"  }\n"
	"}\n";

#endif
