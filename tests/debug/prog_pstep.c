// SPDX-License-Identifier: GPL-2.0
/* The 16-line MPI program of seed 002 (Table 1), with its line numbers. */
#include <mpi.h>
#line 1
int main(int argc, char **argv) {
int rank, i;
MPI_Init(&argc, &argv);
MPI_Comm_rank(MPI_COMM_WORLD, &rank);
if (rank == 1) {
MPI_Status stat;
MPI_Recv(&i,1,MPI_INT,0,0,MPI_COMM_WORLD,&stat);
}
if (rank == 0) {
i = 0;
MPI_Send(&i,1,MPI_INT,1,0,MPI_COMM_WORLD);
}
MPI_Finalize();
return 0;
}
